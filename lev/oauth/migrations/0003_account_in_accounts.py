"""Accounts now live in `accounts` (its 0001): the grant's account points there. State only: the table
and its foreign key are unchanged."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('oauth', '0002_authorization_code_checksum'),
        ('accounts', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='oauthauthorization',
                    name='account',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                            related_name='oauth_authorizations', to='accounts.account'),
                ),
            ],
            database_operations=[],
        ),
    ]
